//! Lowering x86 instructions to RISC-like operations with names the Accel-Sim simulator knows (ThreadFuser,
//! Section III: "a CISC add with a memory operand breaks down into a load and an add").
//!
//! Every instruction is decoded from its bytes (`iced-x86`) into a [`Template`]: the ALU operation its mnemonic
//! stands for, its register destination and sources, the address registers of its memory operands, and the
//! control transfer it ends with. [`crate::accelsim`] turns a template and the accesses the lanes made into
//! lines: one load per loaded value, the ALU operation, one store per stored value, the branch. Registers are
//! numbered `R0`-`R15` (general-purpose), `R16`-`R47` (vector), [`FLAGS`], temporaries from [`TMP`].

use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, OpAccess, Register};

/// The flags register.
pub const FLAGS: u8 = 48;
/// First temporary (loaded values), up to four.
pub const TMP: u8 = 49;
/// x87 stack registers.
pub const X87: u8 = 53;
/// Any other register (MMX, mask registers...).
pub const OTHER_REG: u8 = 54;
/// Registers a lowered program uses (the trace header's `nregs`).
pub const NREGS: u32 = 64;
/// At most this many sources per operation (Accel-Sim's limit).
pub const MAX_SRCS: usize = 4;

/// Operation names Accel-Sim's Ampere opcode table has (first dot-separated token).
pub const KNOWN_OPCODES: &[&str] = &[
    "IADD3", "IMAD", "LOP3", "SHF", "ISETP", "IMNMX", "POPC", "LEA", "FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "DADD",
    "DMUL", "DFMA", "DSETP", "MUFU", "MOV", "SEL", "F2I", "I2F", "F2F", "NOP", "S2R", "LDG", "LDL", "LDS", "LD", "STG",
    "STL", "STS", "ST", "ATOM", "ATOMG", "RED", "MEMBAR", "BAR", "EXIT", "BRA", "CALL", "RET", "JMP", "BSSY", "BSYNC",
];

/// How one x86 instruction lowers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    /// The computation (`None`: the instruction only moves data or transfers control).
    pub alu: Option<&'static str>,
    /// The control transfer it ends with: `BRA`, `JMP`, `CALL`, `RET`.
    pub ctrl: Option<&'static str>,
    /// Register written (the first one; flags when nothing else is).
    pub dst: Option<u8>,
    /// Registers read as data (not as addresses).
    pub srcs: Vec<u8>,
    /// Address registers of the operand read from memory / written to memory.
    pub addr_read: Vec<u8>,
    pub addr_write: Vec<u8>,
    /// `lock`-prefixed or `xchg` with memory: one atomic operation.
    pub atomic: bool,
}

/// The Accel-Sim register of an x86 register (`None` for the instruction pointer and segment registers).
pub fn reg(r: Register) -> Option<u8> {
    if r == Register::None || r.is_segment_register() || r == Register::RIP || r == Register::EIP {
        return None;
    }
    let f = r.full_register();
    if f.is_gpr64() {
        return Some((f as u32 - Register::RAX as u32) as u8);
    }
    if f.is_vector_register() {
        return Some(16 + (f as u32 - Register::ZMM0 as u32).min(31) as u8);
    }
    if (Register::ST0 as u32..=Register::ST7 as u32).contains(&(f as u32)) {
        return Some(X87);
    }
    Some(OTHER_REG)
}

fn push_unique(v: &mut Vec<u8>, r: u8) {
    if !v.contains(&r) {
        v.push(r);
    }
}

/// The ALU operation of a mnemonic; `None` for data movement, stack and control instructions.
pub fn alu_opcode(m: &str) -> Option<&'static str> {
    let pd = |s: &str| s.ends_with("sd") || s.ends_with("pd");
    Some(match m {
        "mov" | "movabs" | "movzx" | "movsx" | "movsxd" | "movd" | "movq" | "movaps" | "movups" | "movapd"
        | "movupd" | "movdqa" | "movdqu" | "movss" | "movsd" | "movhps" | "movlps" | "movhpd" | "movlpd"
        | "vmovdqa" | "vmovdqu" | "vmovaps" | "vmovups" | "vmovss" | "vmovsd" | "vmovq" | "vmovd" | "push" | "pop"
        | "call" | "ret" | "jmp" | "lea" | "leave" | "movs" | "movsb" | "movsw" | "movsq" | "stos" | "stosb"
        | "stosw" | "stosd" | "stosq" | "lods" | "lodsb" | "lodsd" | "lodsq" | "endbr64" | "nop" | "jmpq" => {
            return None;
        }
        _ if m.starts_with('j') => return None,
        _ if m.starts_with("cmov") => "SEL",
        _ if m.starts_with("set") => "SEL",
        "xchg" | "bswap" | "cbw" | "cwde" | "cdqe" | "cwd" | "cdq" | "cqo" | "pshufd" | "pshufb" | "shufps"
        | "shufpd" | "unpcklps" | "unpcklpd" | "unpckhps" | "unpckhpd" | "punpcklbw" | "punpcklwd" | "punpckldq"
        | "punpcklqdq" | "punpckhqdq" | "movmskps" | "movmskpd" | "pmovmskb" | "movhlps" | "movlhps" | "pinsrd"
        | "pinsrq" | "pextrd" | "pextrq" | "pshuflw" | "pshufhw" | "palignr" | "pslldq" | "psrldq" => "MOV",
        "add" | "sub" | "adc" | "sbb" | "inc" | "dec" | "neg" | "xadd" | "paddb" | "paddw" | "paddd" | "paddq"
        | "psubb" | "psubw" | "psubd" | "psubq" | "psadbw" => "IADD3",
        "imul" | "mul" | "div" | "idiv" | "pmulld" | "pmuludq" | "pmullw" | "pmaddwd" | "mulx" => "IMAD",
        "and" | "or" | "xor" | "not" | "andn" | "pand" | "pandn" | "por" | "pxor" | "andps" | "andpd" | "andnps"
        | "andnpd" | "orps" | "orpd" | "xorps" | "xorpd" | "blsr" | "blsi" | "blsmsk" => "LOP3",
        "shl" | "shr" | "sar" | "sal" | "rol" | "ror" | "rcl" | "rcr" | "shld" | "shrd" | "shlx" | "shrx" | "sarx"
        | "rorx" | "psllw" | "pslld" | "psllq" | "psrlw" | "psrld" | "psrlq" | "psraw" | "psrad" => "SHF",
        "cmp" | "test" | "bt" | "bts" | "btr" | "btc" | "cmpxchg" | "pcmpeqb" | "pcmpeqw" | "pcmpeqd" | "pcmpeqq"
        | "pcmpgtb" | "pcmpgtd" | "pcmpgtw" | "ptest" => "ISETP",
        "popcnt" | "lzcnt" | "tzcnt" | "bsf" | "bsr" => "POPC",
        "pminub" | "pmaxub" | "pminsd" | "pmaxsd" | "pminud" | "pmaxud" | "pminsw" | "pmaxsw" => "IMNMX",
        "addss" | "subss" | "addps" | "subps" | "haddps" => "FADD",
        "mulss" | "mulps" => "FMUL",
        "minss" | "maxss" | "minps" | "maxps" => "FMNMX",
        "comiss" | "ucomiss" | "cmpss" | "cmpps" => "FSETP",
        "addsd" | "subsd" | "addpd" | "subpd" | "haddpd" => "DADD",
        "mulsd" | "mulpd" => "DMUL",
        "minsd" | "maxsd" | "minpd" | "maxpd" | "comisd" | "ucomisd" | "cmpsd" | "cmppd" => "DSETP",
        "divss" | "divps" | "divsd" | "divpd" | "sqrtss" | "sqrtps" | "sqrtsd" | "sqrtpd" | "rcpss" | "rcpps"
        | "rsqrtss" | "rsqrtps" => "MUFU",
        "cvtsi2sd" | "cvtsi2ss" | "cvtdq2pd" | "cvtdq2ps" => "I2F",
        "cvttsd2si" | "cvtsd2si" | "cvttss2si" | "cvtss2si" | "cvttpd2dq" | "cvttps2dq" | "cvtpd2dq" | "cvtps2dq" => {
            "F2I"
        }
        "cvtss2sd" | "cvtsd2ss" | "cvtps2pd" | "cvtpd2ps" => "F2F",
        "mfence" | "sfence" | "lfence" => "MEMBAR",
        "pause" | "syscall" | "cpuid" | "rdtsc" | "rdtscp" | "hlt" | "ud2" | "int3" | "int" | "prefetcht0"
        | "prefetcht1" | "prefetcht2" | "prefetchnta" | "prefetchw" | "xgetbv" | "fxsave" | "fxrstor" | "xsave"
        | "xrstor" | "xsavec" | "rdfsbase" | "wrfsbase" => "NOP",
        _ if m.starts_with("vfmadd") || m.starts_with("vfmsub") || m.starts_with("vfnmadd") => {
            if pd(m) {
                "DFMA"
            } else {
                "FFMA"
            }
        }
        _ if m.starts_with('f') => "FADD",
        _ if m.starts_with('v') => return alu_opcode(&m[1..]).or(Some("MOV")),
        _ => "MOV",
    })
}

/// Decodes one instruction into its lowering.
pub fn template(factory: &mut InstructionInfoFactory, insn: &trace::Insn) -> Template {
    let mut d = Decoder::with_ip(64, &insn.bytes, insn.addr, DecoderOptions::NONE);
    let i = d.decode();
    let mut t = Template { alu: alu_opcode(&insn.mnemonic), atomic: insn.atomic, ..Template::default() };
    if i.is_invalid() {
        t.alu = Some("NOP");
        return t;
    }
    t.ctrl = match insn.flow {
        trace::Flow::Call | trace::Flow::IndirectCall => Some("CALL"),
        trace::Flow::Return => Some("RET"),
        trace::Flow::CondBranch | trace::Flow::Jump => Some("BRA"),
        trace::Flow::IndirectJump => Some("JMP"),
        _ => None,
    };
    if t.ctrl.is_some() {
        t.alu = None;
    }
    let stack_op = i.is_stack_instruction();
    let info = factory.info(&i);
    for m in info.used_memory() {
        let regs: Vec<u8> = [m.base(), m.index()].into_iter().filter_map(reg).collect();
        let (r, w) = match m.access() {
            OpAccess::Read | OpAccess::CondRead => (true, false),
            OpAccess::Write | OpAccess::CondWrite => (false, true),
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => (true, true),
            _ => (false, false),
        };
        for x in regs {
            if r {
                push_unique(&mut t.addr_read, x);
            }
            if w {
                push_unique(&mut t.addr_write, x);
            }
        }
    }
    for u in info.used_registers() {
        let r = u.register();
        if stack_op && r.full_register() == Register::RSP {
            continue;
        }
        let Some(x) = reg(r) else { continue };
        match u.access() {
            OpAccess::Write | OpAccess::CondWrite => {
                t.dst.get_or_insert(x);
            }
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => {
                t.dst.get_or_insert(x);
                push_unique(&mut t.srcs, x);
            }
            OpAccess::Read | OpAccess::CondRead if !(t.addr_read.contains(&x) || t.addr_write.contains(&x)) => {
                push_unique(&mut t.srcs, x);
            }
            _ => {}
        }
    }
    if i.rflags_read() != 0 {
        push_unique(&mut t.srcs, FLAGS);
    }
    if t.dst.is_none() && i.rflags_written() != 0 {
        t.dst = Some(FLAGS);
    }
    t.srcs.truncate(MAX_SRCS);
    t.addr_read.truncate(2);
    t.addr_write.truncate(2);
    t
}

/// The opcode suffix of an access of `size` bytes (1, 2, 4, 8 or 16).
pub fn width_suffix(size: u16) -> &'static str {
    match size {
        1 => ".U8",
        2 => ".U16",
        8 => ".64",
        16 => ".128",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(bytes: &[u8], mnemonic: &str, flow: trace::Flow) -> trace::Insn {
        trace::Insn { addr: 0x1000, bytes: bytes.to_vec(), flow, atomic: false, mnemonic: mnemonic.into(), mem: vec![] }
    }

    #[test]
    fn add_with_memory_operand() {
        let mut f = InstructionInfoFactory::new();
        // add [rdi], eax
        let t = template(&mut f, &insn(&[0x01, 0x07], "add", trace::Flow::Next));
        assert_eq!(t.alu, Some("IADD3"));
        assert_eq!(t.addr_read, vec![7]);
        assert_eq!(t.addr_write, vec![7]);
        assert!(t.srcs.contains(&0), "{t:?}");
        assert_eq!(t.dst, Some(FLAGS));
        // mov rax, [rsp+8]: a plain load into rax.
        let t = template(&mut f, &insn(&[0x48, 0x8b, 0x44, 0x24, 0x08], "mov", trace::Flow::Next));
        assert_eq!((t.alu, t.dst), (None, Some(0)));
        assert_eq!(t.addr_read, vec![4]);
        // jne: a branch reading the flags.
        let t = template(&mut f, &insn(&[0x75, 0x00], "jne", trace::Flow::CondBranch));
        assert_eq!((t.alu, t.ctrl), (None, Some("BRA")));
        assert_eq!(t.srcs, vec![FLAGS]);
        // addsd xmm0, xmm1
        let t = template(&mut f, &insn(&[0xf2, 0x0f, 0x58, 0xc1], "addsd", trace::Flow::Next));
        assert_eq!((t.alu, t.dst), (Some("DADD"), Some(16)));
    }

    #[test]
    fn every_opcode_is_known() {
        for m in ["add", "vfmadd231sd", "cmovne", "sete", "fld", "vpxor", "weird", "cvttsd2si", "pause"] {
            let op = alu_opcode(m).unwrap();
            assert!(KNOWN_OPCODES.contains(&op), "{m} -> {op}");
        }
    }
}
