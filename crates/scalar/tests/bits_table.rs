//! Table-driven edge cases for logic, shift and bit instructions (PTX ISA §9.7.1, §9.7.8,
//! §9.7.9 prmt). Expected values are derived from the ISA's semantics pseudo-code.

use scalar::bits::{self, PrmtMode, ShfMode};
use scalar::int::Width::*;

#[test]
fn logic_and_lop3() {
    assert_eq!(bits::not(0, W16), 0xFFFF);
    assert_eq!(bits::and(0xF0F0, 0xFF00, W32), 0xF000);
    assert_eq!(bits::or(0xF0, 0x0F, W8), 0xFF);
    assert_eq!(bits::xor(u64::MAX, 1, W64), u64::MAX - 1);
    // cnot: d = (a == 0) ? 1 : 0, on the type's width.
    assert_eq!(bits::cnot(0, W32), 1);
    assert_eq!(bits::cnot(0x1_0000_0000, W32), 1);
    assert_eq!(bits::cnot(5, W32), 0);
    // lop3: immLut = F(0xF0, 0xCC, 0xAA); ISA examples.
    let (a, b, c) = (0x1234_5678u64, 0x0F0F_F0F0u64, 0xFF00_FF00u64);
    assert_eq!(bits::lop3(a, b, c, 0x80, W32), a & b & c);
    assert_eq!(bits::lop3(a, b, c, 0xFE, W32), a | b | c);
    assert_eq!(bits::lop3(a, b, c, 0x40, W32), a & b & !c & 0xFFFF_FFFF);
    assert_eq!(bits::lop3(a, b, c, 0x1A, W32), ((a & b | c) ^ a) & 0xFFFF_FFFF);
    assert_eq!(bits::lop3(a, b, c, 0xF0, W32), a);
    assert_eq!(bits::lop3(a, b, c, 0xCC, W32), b);
    assert_eq!(bits::lop3(a, b, c, 0xAA, W32), c);
    assert_eq!(bits::lop3(a, b, c, 0x00, W32), 0);
    assert_eq!(bits::lop3(a, b, c, 0xFF, W32), 0xFFFF_FFFF);
}

#[test]
fn shifts() {
    // shl/shr: "Shift amounts greater than the register width N are clamped to N".
    assert_eq!(bits::shl(1, 31, W32), 0x8000_0000);
    assert_eq!(bits::shl(1, 32, W32), 0);
    assert_eq!(bits::shl(1, 1000, W64), 0);
    assert_eq!(bits::shl(0xFF, 4, W8), 0xF0);
    assert_eq!(bits::shr(0x8000_0000, 31, W32, false), 1);
    assert_eq!(bits::shr(0x8000_0000, 32, W32, false), 0);
    assert_eq!(bits::shr(0x8000_0000, 32, W32, true), 0xFFFF_FFFF);
    assert_eq!(bits::shr(0x8000_0000, u32::MAX, W32, true), 0xFFFF_FFFF);
    assert_eq!(bits::shr(0x7FFF_FFFF, 40, W32, true), 0);
    assert_eq!(bits::shr(0x8000, 4, W16, true), 0xF800);
    assert_eq!(bits::shr(1 << 63, 64, W64, true), u64::MAX);
    assert_eq!(bits::shr(1 << 63, 64, W64, false), 0);
}

#[test]
fn funnel_shift() {
    // u32 n = clamp ? min(c, 32) : c & 0x1f; shf.l: (b << n) | (a >> (32-n)); shf.r: (b << (32-n)) | (a >> n).
    let (a, b) = (0x89AB_CDEF, 0x0123_4567);
    assert_eq!(bits::shf(a, b, 8, true, ShfMode::Clamp), 0x2345_6789);
    assert_eq!(bits::shf(a, b, 8, false, ShfMode::Clamp), 0x6789_ABCD);
    assert_eq!(bits::shf(a, b, 0, true, ShfMode::Clamp), b);
    assert_eq!(bits::shf(a, b, 0, false, ShfMode::Clamp), a);
    assert_eq!(bits::shf(a, b, 32, true, ShfMode::Clamp), a);
    assert_eq!(bits::shf(a, b, 40, true, ShfMode::Clamp), a);
    assert_eq!(bits::shf(a, b, 40, false, ShfMode::Clamp), b);
    assert_eq!(bits::shf(a, b, 40, true, ShfMode::Wrap), 0x2345_6789); // 40 & 31 = 8
    assert_eq!(bits::shf(a, b, 32, false, ShfMode::Wrap), a);
    // rotate: a == b
    assert_eq!(bits::shf(0x8000_0001, 0x8000_0001, 1, true, ShfMode::Wrap), 0x0000_0003);
}

#[test]
fn counting() {
    assert_eq!(bits::popc(0xFFFF_FFFF_FFFF_FFFF, W32), 32);
    assert_eq!(bits::popc(u64::MAX, W64), 64);
    // clz: 0..=32 / 0..=64 inclusive.
    assert_eq!(bits::clz(0, W32), 32);
    assert_eq!(bits::clz(0, W64), 64);
    assert_eq!(bits::clz(1, W32), 31);
    assert_eq!(bits::clz(0x1_0000_0000, W32), 32);
    assert_eq!(bits::brev(1, W32), 0x8000_0000);
    assert_eq!(bits::brev(0x0000_0000_0000_0003, W64), 0xC000_0000_0000_0000);
    assert_eq!(bits::brev(0x1234_5678, W32), 0x1E6A_2C48);
}

#[test]
fn bfind() {
    // Unsigned: msb 1; signed: msb 0 for negative inputs; 0xffffffff if none.
    assert_eq!(bits::bfind(0, W32, false, false), 0xFFFF_FFFF);
    assert_eq!(bits::bfind(0, W32, false, true), 0xFFFF_FFFF);
    assert_eq!(bits::bfind(1, W32, false, false), 0);
    assert_eq!(bits::bfind(1, W32, false, true), 31);
    assert_eq!(bits::bfind(0x8000_0000, W32, false, false), 31);
    assert_eq!(bits::bfind(0x8000_0000, W32, true, false), 30); // ~a = 0x7FFFFFFF
    assert_eq!(bits::bfind(0xFFFF_FFFF, W32, true, false), 0xFFFF_FFFF); // -1: no non-sign bit
    assert_eq!(bits::bfind(0xFFFF_FFFE, W32, true, false), 0);
    assert_eq!(bits::bfind(0xFFFF_FFFE, W32, true, true), 31);
    assert_eq!(bits::bfind(u64::MAX, W64, false, false), 63);
    assert_eq!(bits::bfind(1 << 40, W64, true, true), 23);
}

#[test]
fn bfe_bfi() {
    // bfe: pos = b & 0xff, len = c & 0xff; sign bit a[min(pos+len-1, msb)] for signed.
    assert_eq!(bits::bfe(0x0000_FF00, 8, 8, W32, false), 0xFF);
    assert_eq!(bits::bfe(0x0000_FF00, 8, 8, W32, true), 0xFFFF_FFFF);
    assert_eq!(bits::bfe(0x0000_7F00, 8, 8, W32, true), 0x7F);
    assert_eq!(bits::bfe(0xFFFF_FFFF, 8, 0, W32, true), 0); // len 0 → 0
    assert_eq!(bits::bfe(0x8000_0000, 28, 8, W32, false), 0x8); // field runs past msb: zero fill
    assert_eq!(bits::bfe(0x8000_0000, 28, 8, W32, true), 0xFFFF_FFF8); // sign = a[31]
    assert_eq!(bits::bfe(0x8000_0000, 40, 8, W32, true), 0xFFFF_FFFF); // pos beyond msb: sbit = a[31]
    assert_eq!(bits::bfe(0x7FFF_FFFF, 40, 8, W32, true), 0);
    assert_eq!(bits::bfe(0x1234, 0x104, 0x208, W32, false), 0x23); // only low 8 bits of pos/len
    assert_eq!(bits::bfe(u64::MAX, 0, 64, W64, true), u64::MAX);
    assert_eq!(bits::bfe(u64::MAX, 0, 255, W64, false), u64::MAX);
    assert_eq!(bits::bfe(0x8000_0000_0000_0000, 63, 1, W64, true), u64::MAX);
    // bfi: f = b; f[pos+i] = a[i] for i < len, pos+i <= msb.
    assert_eq!(bits::bfi(0xFF, 0, 8, 4, W32), 0xF00);
    assert_eq!(bits::bfi(0xFF, 0x1234_5678, 0, 0, W32), 0x1234_5678);
    assert_eq!(bits::bfi(0xFF, 0x1234_5678, 32, 8, W32), 0x1234_5678); // pos beyond msb
    assert_eq!(bits::bfi(0xFF, 0, 28, 8, W32), 0xF000_0000); // truncated at msb
    assert_eq!(bits::bfi(u64::MAX, 0, 0, 64, W64), u64::MAX);
    assert_eq!(bits::bfi(0xA, 0xFFFF_FFFF, 0x104, 4, W32), 0xFFFF_FFAF); // pos & 0xff = 4
}

#[test]
fn fns() {
    // ISA examples.
    assert_eq!(bits::fns(0xaaaa_aaaa, 3, 1), 3);
    assert_eq!(bits::fns(0xaaaa_aaaa, 3, -1), 3);
    assert_eq!(bits::fns(0xaaaa_aaaa, 2, 1), 3);
    assert_eq!(bits::fns(0xaaaa_aaaa, 2, -1), 1);
    assert_eq!(bits::fns(0xaaaa_aaaa, 0, 16), 31);
    assert_eq!(bits::fns(0xaaaa_aaaa, 0, 17), 0xFFFF_FFFF);
    assert_eq!(bits::fns(0xaaaa_aaaa, 31, -16), 1);
    assert_eq!(bits::fns(0xaaaa_aaaa, 2, 0), 0xFFFF_FFFF); // offset 0: mask[base] must be 1
    assert_eq!(bits::fns(0xaaaa_aaaa, 3, 0), 3);
    assert_eq!(bits::fns(0, 0, 1), 0xFFFF_FFFF);
    assert_eq!(bits::fns(u64::MAX, 31, 1), 31);
    assert_eq!(bits::fns(u64::MAX, 31, 2), 0xFFFF_FFFF);
    assert_eq!(bits::fns(1, 32, 1), 0xFFFF_FFFF); // base > 31: undefined → not found
}

#[test]
fn prmt() {
    let (a, b) = (0x3322_1100u64, 0x7766_5544u64); // byte i holds 0x(i)(i)
                                                   // generic: selector nibbles, bit 3 replicates the sign of the byte.
    assert_eq!(bits::prmt(a, b, 0x3210, PrmtMode::Generic), a);
    assert_eq!(bits::prmt(a, b, 0x7654, PrmtMode::Generic), b);
    assert_eq!(bits::prmt(a, b, 0x0123, PrmtMode::Generic), 0x0011_2233);
    assert_eq!(bits::prmt(a, b, 0x4444, PrmtMode::Generic), 0x4444_4444);
    assert_eq!(bits::prmt(0x80, 0, 0x8880, PrmtMode::Generic), 0xFFFF_FF80);
    assert_eq!(bits::prmt(0x7F, 0, 0x8888, PrmtMode::Generic), 0);
    // modes use c[1:0]; table of the ISA (d.b3 d.b2 d.b1 d.b0):
    // f4e: 0 → 3 2 1 0, 1 → 4 3 2 1, 2 → 5 4 3 2, 3 → 6 5 4 3
    assert_eq!(bits::prmt(a, b, 0, PrmtMode::F4e), 0x3322_1100);
    assert_eq!(bits::prmt(a, b, 1, PrmtMode::F4e), 0x4433_2211);
    assert_eq!(bits::prmt(a, b, 3, PrmtMode::F4e), 0x6655_4433);
    // b4e: 0 → 5 6 7 0, 1 → 6 7 0 1, 2 → 7 0 1 2, 3 → 0 1 2 3
    assert_eq!(bits::prmt(a, b, 0, PrmtMode::B4e), 0x5566_7700);
    assert_eq!(bits::prmt(a, b, 1, PrmtMode::B4e), 0x6677_0011);
    assert_eq!(bits::prmt(a, b, 3, PrmtMode::B4e), 0x0011_2233);
    // rc8: replicate byte c[1:0]
    assert_eq!(bits::prmt(a, b, 2, PrmtMode::Rc8), 0x2222_2222);
    // ecl: 0 → 3 2 1 0, 1 → 3 2 1 1, 2 → 3 2 2 2, 3 → 3 3 3 3
    assert_eq!(bits::prmt(a, b, 1, PrmtMode::Ecl), 0x3322_1111);
    assert_eq!(bits::prmt(a, b, 2, PrmtMode::Ecl), 0x3322_2222);
    // ecr: 0 → 0 0 0 0, 1 → 1 1 1 0, 2 → 2 2 1 0, 3 → 3 2 1 0
    assert_eq!(bits::prmt(a, b, 0, PrmtMode::Ecr), 0x0000_0000);
    assert_eq!(bits::prmt(a, b, 1, PrmtMode::Ecr), 0x1111_1100);
    assert_eq!(bits::prmt(a, b, 2, PrmtMode::Ecr), 0x2222_1100);
    assert_eq!(bits::prmt(a, b, 3, PrmtMode::Ecr), 0x3322_1100);
    // rc16: 0 → 1 0 1 0, 1 → 3 2 3 2, 2 → 1 0 1 0, 3 → 3 2 3 2
    assert_eq!(bits::prmt(a, b, 0, PrmtMode::Rc16), 0x1100_1100);
    assert_eq!(bits::prmt(a, b, 1, PrmtMode::Rc16), 0x3322_3322);
    assert_eq!(bits::prmt(a, b, 6, PrmtMode::Rc16), 0x1100_1100);
}

#[test]
fn szext_bmsk() {
    // szext: N = b; 0 → 0; N >= 32: clamp → a, wrap → N & 31.
    assert_eq!(bits::szext(0xFFFF_FFFF, 0, ShfMode::Wrap, false), 0); // ISA example
    assert_eq!(bits::szext(0x0000_00F0, 8, ShfMode::Clamp, true), 0xFFFF_FFF0);
    assert_eq!(bits::szext(0x0000_00F0, 8, ShfMode::Clamp, false), 0xF0);
    assert_eq!(bits::szext(0x0000_0070, 8, ShfMode::Clamp, true), 0x70);
    assert_eq!(bits::szext(0xDEAD_BEEF, 32, ShfMode::Clamp, true), 0xDEAD_BEEF);
    assert_eq!(bits::szext(0xDEAD_BEEF, 32, ShfMode::Wrap, true), 0);
    assert_eq!(bits::szext(0xDEAD_BEEF, 36, ShfMode::Wrap, true), 0xFFFF_FFFF); // N = 4, 0xF
    assert_eq!(bits::szext(0xDEAD_BEEF, 1, ShfMode::Clamp, true), 0xFFFF_FFFF);
    // bmsk: ISA example bmsk.wrap.b32 rd, 1, 2 → 0x6.
    assert_eq!(bits::bmsk(1, 2, ShfMode::Wrap), 0x6);
    assert_eq!(bits::bmsk(0, 32, ShfMode::Clamp), 0xFFFF_FFFF);
    assert_eq!(bits::bmsk(0, 32, ShfMode::Wrap), 0); // b1 = 0 → mask1 = ~0
    assert_eq!(bits::bmsk(32, 4, ShfMode::Clamp), 0);
    assert_eq!(bits::bmsk(32, 4, ShfMode::Wrap), 0xF); // a1 = 0
    assert_eq!(bits::bmsk(28, 8, ShfMode::Clamp), 0xF000_0000); // sum overflow
    assert_eq!(bits::bmsk(4, 0, ShfMode::Clamp), 0);
}
