//! `mov` with vector operands and vector declarations, as the PTX ISA defines them (5.4.2 Vectors, 9.7.9.4
//! mov): pack and unpack of two or four elements whose sizes add up to the type (`.b16` .. `.b128`), copies
//! between `.v2`/`.v4` vectors, and the forms the ISA (and ptxas 13) do not have refused at load with their
//! line: eight-element vectors (`.reg .v8 .b16`, `mov.v8.u16`, `mov.b128` into eight half-words), vectors over
//! 128 bits, packs whose sizes do not add up. Expected values are written here from the ISA's semantics.

mod common;

use common::{launch, Arg};
use device::Dim3;

/// Runs entry `k` in one thread on the emulator and on the JIT; returns the output buffer's words from each.
fn words_on_both(kernel: &str, input: &[u8], out_words: usize) -> (Vec<u32>, Vec<u32>) {
    let module = ir::compile(kernel).unwrap_or_else(|d| panic!("{d:?}"));
    let args = [Arg::Buf(input.to_vec()), Arg::Buf(vec![0; 4 * out_words])];
    let one = Dim3::new(1, 1, 1);
    let (emu, _) = launch(&mut emu::Emulator::new(), &module, "k", one, one, 0, &args).unwrap();
    let mut jit = jit::Jit::new(jit::Options { threads: 1, ..jit::Options::default() });
    let (native, _) = launch(&mut jit, &module, "k", one, one, 0, &args).unwrap();
    let words = |b: &[u8]| b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<u32>>();
    (words(&emu[1]), words(&native[1]))
}

/// Every pack and unpack width of the ISA's table below 128 bits, on both engines (the `.b128` ones are in
/// `b128.rs`). Input: four words w0..w3. Output: [b64 pack of w0, w1 unpacked as two words] (2 words), [b64
/// pack of four halves (low halves of w0..w3)] (2), [that b64 unpacked as four halves, each zero-extended]
/// (4), [b32 pack of four bytes (low bytes of w0..w3)], [w2 unpacked as four bytes, repacked in reverse
/// order], [b16 pack of two bytes, zero-extended], [b32 from two halves], [b64 unpacked with a sink: the high
/// word] = 13 words (padded to 16).
#[test]
fn pack_and_unpack_follow_the_isa() {
    let kernel = r#"
.version 8.3
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b8 %c<8>;
    .reg .b16 %h<8>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<12>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
    mov.b64 %rd3, {%r1, %r2};
    mov.b64 {%r5, %r6}, %rd3;
    st.global.v2.u32 [%rd2], {%r5, %r6};
    cvt.u16.u32 %h1, %r1;
    cvt.u16.u32 %h2, %r2;
    cvt.u16.u32 %h3, %r3;
    cvt.u16.u32 %h4, %r4;
    mov.b64 %rd5, {%h1, %h2, %h3, %h4};
    st.global.u64 [%rd2+8], %rd5;
    mov.b64 {%h4, %h5, %h6, %h7}, %rd5;
    cvt.u32.u16 %r13, %h4;
    cvt.u32.u16 %r14, %h5;
    cvt.u32.u16 %r15, %h6;
    cvt.u32.u16 %r16, %h7;
    st.global.v4.u32 [%rd2+16], {%r13, %r14, %r15, %r16};
    cvt.u8.u32 %c1, %r1;
    cvt.u8.u32 %c2, %r2;
    cvt.u8.u32 %c3, %r3;
    cvt.u8.u32 %c4, %r4;
    mov.b32 %r17, {%c1, %c2, %c3, %c4};
    mov.b32 {%c4, %c5, %c6, %c7}, %r3;
    mov.b32 %r18, {%c7, %c6, %c5, %c4};
    mov.b16 %h1, {%c1, %c2};
    cvt.u32.u16 %r19, %h1;
    mov.b32 %r20, {%h2, %h3};
    st.global.v4.u32 [%rd2+32], {%r17, %r18, %r19, %r20};
    mov.b64 {_, %r21}, %rd3;
    st.global.u32 [%rd2+48], %r21;
    ret;
}
"#;
    let w: [u32; 4] = [0x1122_3344, 0x5566_7788, 0x99aa_bbcc, 0xddee_ff01];
    let input: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    // The ISA's semantics: pack d = a.x | a.y << s | ...; unpack {d.x, d.y, ...} = {a[0..s-1], a[s..2s-1], ...}.
    let pack64: u64 = (0..4).fold(0, |d, i| d | u64::from(w[i] & 0xffff) << (16 * i));
    let bytes2: Vec<u32> = (0..4).map(|i| (w[2] >> (8 * i)) & 0xff).collect();
    let mut want = vec![w[0], w[1], pack64 as u32, (pack64 >> 32) as u32];
    want.extend((0..4).map(|i| ((pack64 >> (16 * i)) & 0xffff) as u32));
    want.push((0..4).fold(0, |d, i| d | (w[i] & 0xff) << (8 * i)));
    want.push(bytes2[3] | bytes2[2] << 8 | bytes2[1] << 16 | bytes2[0] << 24);
    want.push((w[0] & 0xff) | (w[1] & 0xff) << 8);
    want.push((w[1] & 0xffff) | (w[2] & 0xffff) << 16);
    want.extend([w[1], 0, 0, 0]);
    let (emu, native) = words_on_both(kernel, &input, want.len());
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}

/// What the ISA does not have is refused at load, naming its line: `.v8` and over-128-bit vector
/// declarations (ISA 5.4.2: "Vectors of length 2 and 4 ...", "cannot exceed 128-bits"), `mov.v8` in every
/// operand form, and packs of eight or three elements or of elements whose sizes do not add up to the type
/// (9.7.9.4). ptxas 13 refuses each of them as well ("syntax error", "Illegal vector size: 8", "Vector type
/// too large", "Arguments mismatch").
#[test]
fn forms_outside_the_isa_are_refused_with_their_line() {
    let cases = [
        (".reg .v8 .b16 %v;", "`.v8` vector variables are not valid PTX"),
        (".reg .v4 .f64 %v;", "cannot exceed 128 bits"),
        (".reg .v2 .b128 %v;", "cannot exceed 128 bits"),
        ("mov.v8.u16 {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7};", "`mov.v8`"),
        ("mov.v8.u16 {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, %q0;", "`mov.v8`"),
        ("mov.b128 {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, %q0;", "two or four elements"),
        ("mov.b64 {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}, %rd0;", "two or four elements"),
        ("mov.b32 %r0, {%c0, %c1, %c2};", "two or four elements"),
        ("mov.b64 %rd0, {%r0, %r1, %r2, %r3};", "add up to the type's 64 bits"),
    ];
    for (line, why) in cases {
        let kernel = format!(
            ".version 8.3\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n.reg .b8 %c<8>;\n\
             .reg .b16 %h<8>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n.reg .b128 %q<2>;\n{line}\nret;\n}}\n"
        );
        let diags = ir::compile(&kernel).err().unwrap_or_else(|| panic!("`{line}` was accepted"));
        let d = diags.iter().find(|d| d.message.contains(why)).unwrap_or_else(|| panic!("`{line}`: {diags:?}"));
        let at = d.line_col(kernel.as_bytes()).0;
        assert_eq!(at, 11, "`{line}` refused at line {at}: {}", d.message);
    }
}

/// The ISA's vector copy forms (`.v2`/`.v4`, lists or whole vector registers) still copy every element.
#[test]
fn v4_copies_between_lists_run_on_both_engines() {
    let kernel = r#"
.version 8.3
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
    .reg .b16 %h<8>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.global.v4.u16 {%h0, %h1, %h2, %h3}, [%rd1];
    mov.v4.u16 {%h4, %h5, %h6, %h7}, {%h3, %h2, %h1, %h0};
    st.global.v4.u16 [%rd2], {%h4, %h5, %h6, %h7};
    ret;
}
"#;
    let input: Vec<u8> = [1u16, 2, 3, 4].iter().flat_map(|h| h.to_le_bytes()).collect();
    let want = vec![0x0003_0004, 0x0001_0002];
    let (emu, native) = words_on_both(kernel, &input, 2);
    assert_eq!(emu, want, "emulator");
    assert_eq!(native, want, "JIT");
}
