//! corpus/cuda/bit_ops.cu: logic, shifts and bit manipulation, compared exactly on every PTX variant.
//! The references follow the PTX ISA's definitions of each instruction (funnel shifts, bfe/bfi, bfind, fns,
//! the prmt modes, mul24).

use conformance::prelude::*;

const SRC: &str = "bit_ops";
const N: usize = 100;

fn funnel_l(lo: u32, hi: u32, s: u32) -> u32 {
    let v = u64::from(hi) << 32 | u64::from(lo);
    ((v << s) >> 32) as u32
}

fn funnel_r(lo: u32, hi: u32, s: u32) -> u32 {
    let v = u64::from(hi) << 32 | u64::from(lo);
    (v >> s) as u32
}

fn logic_shift_ref(x: u32, y: u32, z: u64, sh: i32) -> ([u32; 8], [u64; 3]) {
    let s31 = (sh & 31) as u32;
    let s63 = (sh & 63) as u32;
    let clamp = (sh as u32).min(32);
    let h = x as u16;
    let hn = !h;
    let hc = u16::from(h == 0);
    let cn = u32::from(x == 0);
    let extra = (u32::from(hn) + u32::from(hc)).wrapping_add(cn);
    let out = [
        (x & y) | (!x & 0xF0F0_F0F0),
        x ^ y ^ (x | !y),
        x << s31,
        x >> s31,
        ((x as i32) >> s31) as u32,
        funnel_l(x, y, s31) ^ funnel_r(x, y, s31),
        funnel_l(x, y, clamp).wrapping_add(funnel_r(x, y, clamp)),
        x.rotate_left(7).wrapping_add(extra),
    ];
    let out64 = [z.rotate_left(s63), ((z as i64) >> s63) as u64, !z ^ (z & 0xFFFF_0000_FFFF_0000)];
    (out, out64)
}

#[test]
fn logic_shift() {
    let mut rng = Rng::new(200);
    let a: Vec<u32> = rng.fill(N, EDGE_U32, |r| r.next_u32());
    let b: Vec<u32> = rng.fill(N, &[0, u32::MAX, 1, 0x8000_0000, 0x1234_5678], |r| r.next_u32());
    let c: Vec<u64> = rng.fill(N, EDGE_U64, |r| r.next_u64());
    let s: Vec<i32> = rng.fill(N, &[0, 1, 31, 32, 33, 63, 64, 65, -1, -31, -32, 100, i32::MIN, i32::MAX, 7, 16], |r| {
        r.range_i32(-80, 80)
    });
    let mut out = Vec::new();
    let mut out64 = Vec::new();
    for i in 0..N {
        let (o, o64) = logic_shift_ref(a[i], b[i], c[i], s[i]);
        out.extend_from_slice(&o);
        out64.extend_from_slice(&o64);
    }
    let args = vec![
        Arg::input(&a),
        Arg::input(&b),
        Arg::input(&c),
        Arg::input(&s),
        Arg::output::<u32>(8 * N),
        Arg::output::<u64>(3 * N),
    ];
    let checks = vec![Check::exact(4, "out", Values::U32(out)), Check::exact(5, "out64", Values::U64(out64))];
    check(SRC, Case::outputs("logic_shift", Shape::linear(1, N as u32), args, checks));
}

fn ffs32(x: u32) -> u32 {
    if x == 0 {
        0
    } else {
        x.trailing_zeros() + 1
    }
}

fn ffs64(x: u64) -> u32 {
    if x == 0 {
        0
    } else {
        x.trailing_zeros() + 1
    }
}

/// `prmt.b32` without a mode: each selector nibble picks a byte of {b, a}; bit 3 replicates its sign.
fn prmt_generic(a: u32, b: u32, c: u32) -> u32 {
    let src = u64::from(b) << 32 | u64::from(a);
    let mut d = 0u32;
    for k in 0..4 {
        let sel = (c >> (4 * k)) & 0xf;
        let byte = (src >> (8 * (sel & 7))) as u8;
        let v = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        d |= u32::from(v) << (8 * k);
    }
    d
}

/// `prmt.b32.<mode>`: the byte indices (d.b0, d.b1, d.b2, d.b3) for `c & 3`, from the PTX ISA table.
fn prmt_mode(a: u32, b: u32, c: u32, mode: &str) -> u32 {
    let src = u64::from(b) << 32 | u64::from(a);
    let n = (c & 3) as usize;
    let idx: [usize; 4] = match mode {
        "f4e" => [n, n + 1, n + 2, n + 3],
        "b4e" => [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]][n],
        "rc8" => [n; 4],
        "ecl" => [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][n],
        "ecr" => [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]][n],
        "rc16" => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][n],
        _ => unreachable!(),
    };
    idx.iter().enumerate().fold(0u32, |d, (k, &j)| d | u32::from((src >> (8 * (j % 8))) as u8) << (8 * k))
}

/// `fns.b32`: the position of the `offset`-th set bit of `mask` counting from `base` (up for positive offsets,
/// down for negative ones); 0xffffffff if there is none.
fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    if offset == 0 {
        return if mask >> base & 1 == 1 { base } else { u32::MAX };
    }
    let mut pos = base as i32;
    let mut count = offset.unsigned_abs() - 1;
    let inc = if offset > 0 { 1 } else { -1 };
    while (0..32).contains(&pos) {
        if mask >> pos & 1 == 1 {
            if count == 0 {
                return pos as u32;
            }
            count -= 1;
        }
        pos += inc;
    }
    u32::MAX
}

/// `bfe`: `len` bits of `a` from `pos`, zero- or sign-extended (the sign is the field's top bit, or the
/// value's top bit when the field runs past it).
fn bfe(a: u64, pos: u32, len: u32, bits: u32, signed: bool) -> u64 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let msb = bits - 1;
    let sbit = if signed && len > 0 { (a >> (pos + len - 1).min(msb)) & 1 } else { 0 };
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// `bfi`: `b` with `len` low bits of `f` inserted at `pos`.
fn bfi(f: u64, b: u64, pos: u32, len: u32, bits: u32) -> u64 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut d = b;
    let mut i = 0;
    while i < len && pos + i < bits {
        d = (d & !(1 << (pos + i))) | (((f >> i) & 1) << (pos + i));
        i += 1;
    }
    d
}

/// `bfind.u32/.u64`: the position of the most significant set bit; 0xffffffff for zero.
fn bfind_u(x: u64) -> u32 {
    if x == 0 {
        u32::MAX
    } else {
        63 - x.leading_zeros()
    }
}

fn bfind_s32(x: i32) -> u32 {
    let v = if x < 0 { !x } else { x } as u32;
    if v == 0 {
        u32::MAX
    } else {
        31 - v.leading_zeros()
    }
}

fn mul24_hi_s(a: u32, b: u32) -> u32 {
    let x = i64::from(((a << 8) as i32) >> 8);
    let y = i64::from(((b << 8) as i32) >> 8);
    ((x * y) >> 16) as u32
}

#[test]
fn bit_manip() {
    let mut rng = Rng::new(201);
    let a: Vec<u32> = rng.fill(N, EDGE_U32, |r| r.next_u32() >> (r.next_u32() % 32));
    let b: Vec<u32> = rng.fill(N, &[0, u32::MAX, 0x8000_0000, 0x7FFF_FFFF, 1, 0xFFFF_FFFE], |r| r.next_u32());
    let c: Vec<u64> = rng.fill(N, EDGE_U64, |r| r.next_u64() >> (r.next_u32() % 64));
    let mut out = vec![0u32; 16 * N];
    let mut out64 = vec![0u64; 3 * N];
    for i in 0..N {
        let (x, y, z) = (a[i], b[i], c[i]);
        let iu = i as u32;
        let bfind_sum = bfind_u(u64::from(x))
            .wrapping_add(if x == 0 { u32::MAX } else { x.leading_zeros() })
            .wrapping_add(bfind_s32(y as i32));
        let prmt = ["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"].iter().fold(0, |acc, m| acc ^ prmt_mode(x, y, iu, m));
        let row = [
            x.reverse_bits(),
            x.count_ones() + z.count_ones(),
            x.leading_zeros() + z.leading_zeros(),
            ffs32(x) + ffs64(z),
            prmt_generic(x, y, 0x3210 + (iu & 7)),
            fns(x, iu & 31, 1) ^ fns(x, 31, -2),
            bfe(u64::from(x), iu & 15, 9, 32, false) as u32,
            bfe(u64::from(x), 4, 12, 32, true) as u32,
            bfi(u64::from(y), u64::from(x), 8, iu & 7, 32) as u32,
            bfind_sum,
            prmt,
            !y,
            mul24_lo(x, y).wrapping_add(mul24_hi_s(x, y)),
            u32::from(x & (1 << (iu & 31)) != 0),
        ];
        out[16 * i..16 * i + row.len()].copy_from_slice(&row);
        let bfe64 = bfe(z, iu & 31, 20, 64, false);
        let bfi64 = bfi(z, u64::from(x), 16, 24, 64);
        out64[3 * i] = bfe64 ^ bfi64;
        out64[3 * i + 1] = z.reverse_bits().wrapping_mul(2);
        out64[3 * i + 2] = u64::from(bfind_u(z));
    }
    let args =
        vec![Arg::input(&a), Arg::input(&b), Arg::input(&c), Arg::output::<u32>(16 * N), Arg::output::<u64>(3 * N)];
    let checks = vec![Check::exact(3, "out", Values::U32(out)), Check::exact(4, "out64", Values::U64(out64))];
    check(SRC, Case::outputs("bit_manip", Shape::linear(1, N as u32), args, checks));
}

fn mul24_lo(a: u32, b: u32) -> u32 {
    (u64::from(a & 0xff_ffff) * u64::from(b & 0xff_ffff)) as u32
}
